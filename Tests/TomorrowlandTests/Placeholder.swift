// Temporary: removed when this target gets its first real source file.
