// EncodeSession: filled in by its issue.
