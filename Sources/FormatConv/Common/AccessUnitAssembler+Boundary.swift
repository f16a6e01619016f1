// Access-unit boundaries a transport knows (`endAccessUnit()`).

extension AccessUnitAssembler {
    /// Declares that the bytes appended so far end an access unit, and hands
    /// that unit out now.
    ///
    /// Annex-B alone cannot mark the end of an access unit: the assembler
    /// learns that a unit is complete only when the first NAL unit of the next
    /// one arrives (H.264 7.4.1.2.3, H.265 7.4.2.4.4), which costs a live
    /// receiver one frame of delay. Transports that know the boundary — one
    /// message per access unit, the RTP marker bit, a container packet — call
    /// this after appending each unit to get zero added delay.
    ///
    /// The bytes appended so far must end exactly at the end of a NAL unit;
    /// parameter sets, the format description and timestamps carry over to
    /// the next unit.
    public mutating func endAccessUnit() -> [AssemblerOutput] {
        finish()
    }
}
