import AnnounceModel
import AnnounceSources
import AnnounceSystem

/// What a play reads, and where an interrupted one goes on in it.
extension EngineDriver {
    /// An item's file, media, download, speech or live stream as a source; an alert's from
    /// `alertCache`, decoded once. `titles`: a live stream's title changes, by item id.
    static func sources(
        alertCache: AlertCache, speechCache: SpeechCache?, media: MediaDirectory?, downloads: Downloads?,
        standby: EngineStandby, titles: @escaping @Sendable (ItemID, String?) -> Void
    ) -> SourceMaker {
        { item, alert, cancellation throws(AnnounceError) in
            if let stream = item.clip.stream {
                return try liveSource(stream, of: item, cancellation: cancellation, titles: titles)
            }
            if let speech = item.clip.speech {
                return try SpeechSource(
                    speech: speech, cache: speechCache, cancellation: cancellation, standby: standby)
            }
            if let downloads, let growing = downloads.ensure(item, urgent: true) {
                return try downloadSource(item, growing, downloads: downloads, cancellation: cancellation)
            }
            if let name = item.clip.media, let media {
                // Its messages name the input as the user gave it (stdin), not the daemon's file.
                let path = media.filePath(name)
                do throws(AnnounceError) { return try FileSource(path: path) } catch {
                    throw error.naming(path, as: item.clip.path)
                }
            }
            return alert
                ? FileSource(decoder: try alertCache.decoder(for: item.clip.file))
                : try FileSource(file: item.clip.file)
        }
    }

    /// A URL item's body as it downloads. Its messages name the URL; bytes of no known format
    /// from a server that called them something other than audio are named by that type:
    /// `not audio (text/html)`.
    private static func downloadSource(
        _ item: QueueItem, _ growing: GrowingFile, downloads: Downloads,
        cancellation: Cancellation
    ) throws(AnnounceError) -> any Source {
        do throws(AnnounceError) {
            // The first byte comes after the response's head: the length is known by then (when
            // the server gives one), and decoders that need it need not wait for the end.
            _ = try growing.wait(forByteAt: 0, cancellation: cancellation)
            return try FileSource(input: GrowingInput(file: growing, name: item.clip.path, cancellation: cancellation))
        } catch {
            let named = error.naming(growing.path, as: item.clip.path)
            if case .undecodable(_, let reason) = named, reason.hasPrefix(DecoderRegistry.unknownFormat),
                let name = item.clip.media, let type = downloads.contentType(of: name), !type.hasPrefix("audio/")
            {
                throw .undecodable(path: item.clip.path, reason: "not audio (\(type))")
            }
            throw named
        }
    }

    /// Where a play of `source` goes on after `heard` program frames, by its `resumption`: the
    /// offset in it, the extra passes left, and the frames before `heard` it plays again (from
    /// a sentence's start); nil when the whole program has been heard.
    static func resumePoint(of source: any Source, heard: Int64, startFrame: Int64, loops: Int)
        -> (offset: Int64, loops: Int, replayed: Int64)?
    {
        // A first play starts where it was asked to (a source that cannot seek refuses `--start`).
        if heard > 0, source.resumption == .liveRejoin {
            return (0, loops, 0)  // what went by is gone: what the source gives now, without seeking
        }
        guard
            let exact = resumePoint(
                heard: heard, startFrame: startFrame, fileFrames: source.duration.frames,
                loops: loops)
        else { return nil }
        guard heard > 0, source.resumption == .sentenceStart else { return (exact.offset, exact.loops, 0) }
        let sentence = min(exact.offset, max(0, source.resumeFrame(forHeard: exact.offset)))
        return (sentence, exact.loops, exact.offset - sentence)
    }

    /// Where to go on after `heard` program frames: the offset in the file and the
    /// extra passes left; nil when the whole program has been heard.
    static func resumePoint(heard: Int64, startFrame: Int64, fileFrames: Int64?, loops: Int) -> (
        offset: Int64, loops: Int
    )? {
        let position = startFrame + heard
        guard let fileFrames, fileFrames > 0 else { return (position, loops) }
        let pass = position / fileFrames
        if loops >= 0 && pass > loops { return nil }
        return (position % fileFrames, loops < 0 ? -1 : loops - Int(pass))
    }
}
