// META: title=WebCryptoAPI: importKey() for OKP keys (Ed25519)
// Palisade's driver for WPT's import_export/okp_importKey_Ed25519.https.any.js. WPT's import_export files are
// classic scripts that declare functions util/helpers.js declares too (equalBuffers,
// objectToString…): a worker runs them in one global scope, where the later declaration
// replaces the earlier one, but as one module they are a SyntaxError. So the driver runs the
// file and the scripts its `// META: script=` lines name, in that order, as one classic script
// (an indirect eval), unchanged.
const scripts = [
  "WebCryptoAPI/util/helpers.js",
  "WebCryptoAPI/util/okp_key_fixtures.js",
  "WebCryptoAPI/import_export/okp_importKey_fixtures.js",
  "WebCryptoAPI/import_export/okp_importKey.js",
  "WebCryptoAPI/import_export/okp_importKey_Ed25519.https.any.js",
];
const texts = [];
for (const path of scripts) texts.push(await (await fetch(path)).text());
(0, eval)(texts.join("\n"));
