"""The linker: resolves unlinked relations once their far end is indexed."""
