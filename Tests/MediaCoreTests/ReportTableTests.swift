// ReportTable: labels padded to one width, sections, and the number formats.
import MediaCore
import Testing

@Suite struct ReportTableTests {
    @Test func rowsLineUpAfterTheLongestLabelAndSectionsStandAlone() {
        var table = ReportTable()
        table.add("frames", "300")
        table.section("quality")
        table.add("average PSNR", "42.30 dB")
        #expect(table.rendered == "  frames        300\n\nquality\n  average PSNR  42.30 dB")
    }

    @Test func numbersHaveTheirDigitsAfterThePoint() {
        #expect(ReportTable.formatted(2, digits: 2) == "2.00")
        #expect(ReportTable.formatted(1.26) == "1.3")
        #expect(ReportTable.formatted(29.97, digits: 0) == "30")
        #expect(ReportTable.formatted(.infinity) == "inf")
        #expect(ReportTable.formatted(.nan) == "n/a")
        #expect(ReportTable.milliseconds(0.0156) == "15.6 ms")
    }
}
