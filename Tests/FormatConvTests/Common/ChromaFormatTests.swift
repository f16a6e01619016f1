import FormatConv
import Testing

struct ChromaFormatTests {
    @Test(
        "raw values are chroma_format_idc and descriptions the J:a:b notation",
        arguments: [
            (ChromaFormat.monochrome, 0, "4:0:0"), (.yuv420, 1, "4:2:0"), (.yuv422, 2, "4:2:2"),
            (.yuv444, 3, "4:4:4"),
        ])
    func naming(format: ChromaFormat, idc: Int, text: String) {
        #expect(format.rawValue == idc)
        #expect(ChromaFormat(rawValue: idc) == format)
        #expect(format.description == text)
    }
}
