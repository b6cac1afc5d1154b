const formats = [
  "deflate",
  "deflate-raw",
  "gzip",
  "brotli",
]
