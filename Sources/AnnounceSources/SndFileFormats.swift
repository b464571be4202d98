import AnnounceModel
import CSndFile

#if canImport(Glibc)
    import Glibc
#endif

/// Vorbis I's channel order (spec section 4.3.9, also Opus's mapping family 1) against WAV's and
/// ALSA's (FL FR FC LFE BL BR SL SR): the centre comes second and the LFE last in Vorbis.
enum VorbisChannelOrder {
    /// For each WAV position, the Vorbis channel that goes there; nil when the orders agree.
    static func wavOrder(channels: Int) -> [Int]? {
        switch channels {
        case 3: [0, 2, 1]  // L C R
        case 5: [0, 2, 1, 3, 4]  // FL C FR BL BR
        case 6: [0, 2, 1, 5, 3, 4]  // FL C FR BL BR LFE
        case 7: [0, 2, 1, 6, 5, 3, 4]  // FL C FR SL SR BC LFE
        case 8: [0, 2, 1, 7, 5, 6, 3, 4]  // FL C FR SL SR BL BR LFE
        default: nil  // mono, stereo, quad (FL FR BL BR) and beyond 8 (no defined order)
        }
    }

    /// Reorders interleaved frames in place (no allocation: at most 8 channels).
    static func reorder(_ samples: UnsafeMutablePointer<Float>, frames: Int, to order: [Int]) {
        let channels = order.count
        withUnsafeTemporaryAllocation(of: Float.self, capacity: channels) { frame in
            for start in stride(from: 0, to: frames * channels, by: channels) {
                for channel in 0..<channels { frame[channel] = samples[start + order[channel]] }
                for channel in 0..<channels { samples[start + channel] = frame[channel] }
            }
        }
    }
}

/// The container, from libsndfile's major format.
func sndfileContainer(_ major: Int, sniffed: SniffedContainer) -> Container {
    switch major {
    case SF_FORMAT_WAV: .wav
    case SF_FORMAT_WAVEX: .wavExtensible
    case SF_FORMAT_RF64: .rf64
    case SF_FORMAT_CAF: .caf
    case SF_FORMAT_AIFF: sniffed == .aifc ? .aifc : .aiff  // libsndfile reports both as AIFF
    case SF_FORMAT_FLAC: .flac
    case SF_FORMAT_OGG: .ogg
    case SF_FORMAT_W64: .wave64
    case SF_FORMAT_AU: .au
    case SF_FORMAT_PAF: .paf
    case SF_FORMAT_SVX: .svx8
    case SF_FORMAT_NIST: .nistSphere
    case SF_FORMAT_VOC: .voc
    case SF_FORMAT_IRCAM: .ircam
    case SF_FORMAT_MAT4: .mat4
    case SF_FORMAT_MAT5: .mat5
    case SF_FORMAT_PVF: .pvf
    case SF_FORMAT_XI: .xi
    case SF_FORMAT_HTK: .htk
    case SF_FORMAT_SDS: .sds
    case SF_FORMAT_AVR: .avr
    case SF_FORMAT_SD2: .soundDesigner2
    case SF_FORMAT_WVE: .psionWVE
    case SF_FORMAT_MPC2K: .mpc2k
    case SF_FORMAT_MPEG: .mp3
    default: .other("libsndfile format 0x\(String(major, radix: 16))")
    }
}

/// The codec and the sample format that reproduces it exactly.
func describeCodec(_ minor: Int) -> (Codec, SampleFormat) {
    switch minor {
    case SF_FORMAT_PCM_S8: (.pcm(bits: 8), .int16)
    case SF_FORMAT_PCM_U8: (.pcm(bits: 8, unsigned: true), .int16)
    case SF_FORMAT_PCM_16: (.pcm(bits: 16), .int16)
    case SF_FORMAT_PCM_24: (.pcm(bits: 24), .int32)
    case SF_FORMAT_PCM_32: (.pcm(bits: 32), .int32)
    case SF_FORMAT_FLOAT: (.float(bits: 32), .float32)
    case SF_FORMAT_DOUBLE: (.float(bits: 64), .float32)
    case SF_FORMAT_ULAW: (.muLaw, .int16)
    case SF_FORMAT_ALAW: (.aLaw, .int16)
    case SF_FORMAT_IMA_ADPCM: (.imaADPCM, .int16)
    case SF_FORMAT_MS_ADPCM: (.msADPCM, .int16)
    case SF_FORMAT_VORBIS: (.vorbis, .float32)
    case SF_FORMAT_OPUS: (.opus, .float32)
    case SF_FORMAT_ALAC_16: (.alac(bits: 16), .int16)
    case SF_FORMAT_ALAC_20: (.alac(bits: 20), .int32)
    case SF_FORMAT_ALAC_24: (.alac(bits: 24), .int32)
    case SF_FORMAT_ALAC_32: (.alac(bits: 32), .int32)
    case SF_FORMAT_DWVW_12: (.dwvw(bits: 12), .int16)
    case SF_FORMAT_DWVW_16: (.dwvw(bits: 16), .int16)
    case SF_FORMAT_DWVW_24: (.dwvw(bits: 24), .int32)
    case SF_FORMAT_DPCM_8: (.dpcm(bits: 8), .int16)
    case SF_FORMAT_DPCM_16: (.dpcm(bits: 16), .int16)
    case SF_FORMAT_GSM610: (.gsm610, .int16)
    case SF_FORMAT_VOX_ADPCM: (.okiADPCM, .int16)
    case SF_FORMAT_G721_32: (.g721ADPCM, .int16)
    case SF_FORMAT_G723_24, SF_FORMAT_G723_40: (.g723ADPCM, .int16)
    case SF_FORMAT_NMS_ADPCM_16, SF_FORMAT_NMS_ADPCM_24, SF_FORMAT_NMS_ADPCM_32: (.nmsADPCM, .int16)
    case SF_FORMAT_MPEG_LAYER_III: (.other("MPEG Layer III"), .float32)
    default: (.other("sub-format 0x\(String(minor, radix: 16))"), .float32)
    }
}
