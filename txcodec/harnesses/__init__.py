"""One package per harness, the same module names in each: records, codec, store,
read, write."""
