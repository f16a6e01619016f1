// PixelTransfer: filled in by its issue.
