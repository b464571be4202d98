/// How one clip is played (AVAudioPlayer's volume, pan, numberOfLoops, currentTime).
public struct PlaybackOptions: Equatable, Sendable {
    /// Linear gain; 1 leaves samples untouched.
    public var gain: Float = 1
    /// -1 full left … 1 full right. A mono clip with a pan plays in stereo.
    public var pan: Float = 0
    /// Extra passes after the first; -1 repeats until stopped.
    public var loops: Int = 0
    /// Where the first pass starts; later passes start at 0.
    public var start: TimeSpan?
    /// A linear ramp up from silence at the start (a resumed clip).
    public var fadeIn: TimeSpan?

    public init(gain: Float = 1, pan: Float = 0, loops: Int = 0, start: TimeSpan? = nil, fadeIn: TimeSpan? = nil) {
        self.gain = gain
        self.pan = pan
        self.loops = loops
        self.start = start
        self.fadeIn = fadeIn
    }
}
