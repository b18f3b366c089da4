"""Data tools: jq (libjq), diff, patch, tar, gzip/gunzip/zcat, od/xxd/hexdump, one module per tool or family."""
