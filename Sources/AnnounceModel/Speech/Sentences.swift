/// Splits text into the sentences an interrupted utterance resumes at (never mid-word) and
/// that are rendered one at a time: after `.`, `!`, `?` or `…` (and any closing quotes or
/// brackets) followed by white space, and at blank lines. A sentence longer than
/// `maxCharacters` is cut at its last comma, semicolon, colon or space before that, so that
/// each render starts quickly and memory stays bounded whatever the text's length.
public enum Sentences {
    public static let maxCharacters = 600

    public static func split(_ text: String) -> [String] {
        var sentences: [String] = []
        var current = ""
        var newlines = 0
        func flush() {
            var sentence = current.trimming(" \t\r\n")
            current = ""
            while sentence.count > maxCharacters {
                let window = sentence.prefix(maxCharacters)
                let cut = window.lastIndex(where: { ",;:".contains($0) }).map { window.index(after: $0) }
                    ?? window.lastIndex(where: \.isWhitespace) ?? window.endIndex
                sentences.append(String(sentence[..<cut]).trimming(" \t\r\n"))
                sentence = String(sentence[cut...]).trimming(" \t\r\n")
            }
            if !sentence.isEmpty { sentences.append(sentence) }
        }
        var characters = text.makeIterator()
        var pendingEnd = false  // a sentence mark (and closers) seen: a following space ends it
        while let character = characters.next() {
            if character.isNewline {
                newlines += 1
                if newlines >= 2 || pendingEnd { flush(); pendingEnd = false } else { current.append(" ") }
                continue
            }
            newlines = 0
            if character.isWhitespace {
                if pendingEnd { flush(); pendingEnd = false } else { current.append(character) }
                continue
            }
            current.append(character)
            if ".!?…".contains(character) {
                pendingEnd = true
            } else if pendingEnd && !"\"'”’»)]".contains(character) && !".!?…".contains(character) {
                pendingEnd = false  // "3.5", "e.g.x": not an end
            }
        }
        flush()
        return sentences
    }
}
