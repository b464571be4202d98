/// Splits text into the sentences an interrupted utterance resumes at (never mid-word) and
/// that are rendered one at a time: after `.`, `!`, `?` or `…` (and any closing quotes or
/// brackets) followed by white space, after the full-width `。`, `！`, `？` (which need none),
/// and at blank lines. A sentence longer than `maxCharacters` is cut after its last comma,
/// semicolon, colon (`，`, `、` too) or white space before that, else at that length, so that
/// each render starts quickly and memory stays bounded whatever the text's length.
public enum Sentences {
    public static let maxCharacters = 600

    private static let marks: Set<Character> = [".", "!", "?", "…"]
    private static let fullWidthMarks: Set<Character> = ["。", "！", "？"]
    private static let closers: Set<Character> = ["\"", "'", "”", "’", "»", ")", "]", "」", "』", "）"]
    private static let pauses: Set<Character> = [",", ";", ":", "，", "、", "；", "："]

    public static func split(_ text: String) -> [String] {
        var sentences: [String] = []
        var current = ""
        var newlines = 0
        func flush() {
            var sentence = Substring(current)
            current = ""
            while true {
                sentence = trimmed(sentence)
                guard sentence.count > maxCharacters else { break }
                let window = sentence.prefix(maxCharacters)
                // After the last pause or space in the window; a window with neither is cut at its end.
                let cut =
                    window.lastIndex(where: { pauses.contains($0) || $0.isWhitespace }).map { window.index(after: $0) }
                    ?? window.endIndex
                sentences.append(String(trimmed(sentence[..<cut])))
                sentence = sentence[cut...]
            }
            if !sentence.isEmpty { sentences.append(String(sentence)) }
        }
        var pendingEnd = false  // a sentence mark (and closers) seen: a following space ends it
        for character in text {
            if character.isNewline {
                newlines += 1
                if newlines >= 2 || pendingEnd {
                    flush()
                    pendingEnd = false
                } else {
                    current.append(" ")
                }
                continue
            }
            newlines = 0
            if character.isWhitespace {
                if pendingEnd {
                    flush()
                    pendingEnd = false
                } else {
                    current.append(character)
                }
                continue
            }
            if pendingEnd && fullWidthEnd(current) && !closers.contains(character) && !marks.contains(character)
                && !fullWidthMarks.contains(character)
            {
                flush()  // 。 ends a sentence without a space after it
                pendingEnd = false
            }
            current.append(character)
            if marks.contains(character) || fullWidthMarks.contains(character) {
                pendingEnd = true
            } else if pendingEnd && !closers.contains(character) {
                pendingEnd = false  // "3.5", "e.g.x": not an end
            }
        }
        flush()
        return sentences.filter { !$0.isEmpty }
    }

    /// The text so far ends with a full-width mark (and closers).
    private static func fullWidthEnd(_ text: String) -> Bool {
        text.reversed().first { !closers.contains($0) }.map { fullWidthMarks.contains($0) } ?? false
    }

    private static func trimmed(_ text: Substring) -> Substring {
        guard let first = text.firstIndex(where: { !$0.isWhitespace }),
            let last = text.lastIndex(where: { !$0.isWhitespace })
        else { return "" }
        return text[first...last]
    }
}
