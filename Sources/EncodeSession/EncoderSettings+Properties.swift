import MediaCore
import NativeCodecs

// The session's properties as the backends' settings (EncoderSettings,
// package-level in NativeCodecs).
extension EncoderSettings {
    /// The backend settings for `properties` (already validated).
    init(_ properties: CompressionProperties) {
        self.init()
        averageBitRate = properties.averageBitRate
        dataRateLimits = properties.dataRateLimits.map { .init(maxBitRate: $0.maxBitRate, bufferSize: $0.bufferSize) }
        constantRateFactor = properties.constantRateFactor
        quality = properties.quality
        constantQP = properties.constantQP
        // Constrained High is High without B-frames; the session sets its
        // constraint flags in the description's SPS.
        profile = properties.profile == .constrainedHigh ? "high" : properties.profile?.rawValue
        level = properties.level
        allowFrameReordering = properties.allowFrameReordering
        maxBFrames = properties.maxBFrames
        realTime = properties.realTime || properties.lowLatency || properties.maxFrameDelayCount == 0
        intraRefresh = properties.lowLatency
        oneFrameVBV = properties.lowLatency && properties.averageBitRate != nil && properties.dataRateLimits == nil
        maxSliceBytes = properties.maxSliceBytes
        constantBitRate = properties.constantBitRate
        minQP = properties.minQP
        maxQP = properties.maxQP
        referenceFrames = properties.referenceBufferCount
        calculatePSNR = properties.calculatePSNR
        temporalLayers = properties.temporalLayers || properties.baseLayerBFrames != nil
        baseLayerBFrames = properties.baseLayerBFrames
        if let bFrames = properties.baseLayerBFrames { maxBFrames = bFrames }
        hdr10 = properties.hdr10
        if !properties.allowTemporalCompression || properties.profile == .constrainedHigh {
            allowFrameReordering = false
        }
        preset = properties.preset
        threadCount = properties.threadCount
        entropyMode = properties.entropyMode?.rawValue
        openGOP = properties.openGOP
        slicesPerFrame = properties.slicesPerFrame
        colorPrimaries = properties.colorPrimaries?.rawValue
        transferFunction = properties.transferFunction?.rawValue
        yCbCrMatrix = properties.yCbCrMatrix?.rawValue
        fullRange = properties.fullRange
        sampleAspectRatio = properties.sampleAspectRatio
    }
}

extension EncoderConfiguration {
    /// A configuration for `properties` (tests build backends below the session with it).
    package init(
        width: Int, height: Int, codec: CodecType, properties: CompressionProperties, timescale: Int32,
        frameRate: (numerator: Int, denominator: Int), keyFrameInterval: Int?, pixelFormat: PixelFormat
    ) {
        self.init(
            width: width, height: height, codec: codec, settings: EncoderSettings(properties), timescale: timescale,
            frameRate: frameRate, keyFrameInterval: keyFrameInterval, pixelFormat: pixelFormat)
    }

    /// A configuration for 4:2:0 pictures of `bitDepth` bits (8: I420, 10: I010).
    package init(
        width: Int, height: Int, codec: CodecType, properties: CompressionProperties, timescale: Int32,
        frameRate: (numerator: Int, denominator: Int), keyFrameInterval: Int?, bitDepth: Int
    ) {
        self.init(
            width: width, height: height, codec: codec, properties: properties, timescale: timescale,
            frameRate: frameRate, keyFrameInterval: keyFrameInterval,
            pixelFormat: PixelFormat.planar(.yuv420, bitDepth: bitDepth)!)
    }
}
