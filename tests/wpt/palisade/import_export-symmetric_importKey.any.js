// META: title=WebCryptoAPI: importKey() for symmetric keys
// Palisade's driver for WPT's import_export/symmetric_importKey.https.any.js. WPT's import_export files are
// classic scripts that declare functions util/helpers.js declares too (equalBuffers,
// objectToString…): a worker runs them in one global scope, where the later declaration
// replaces the earlier one, but as one module they are a SyntaxError. So the driver runs the
// file and the scripts its `// META: script=` lines name, in that order, as one classic script
// (an indirect eval), unchanged.
const scripts = [
  "WebCryptoAPI/util/helpers.js",
  "WebCryptoAPI/import_export/symmetric_importKey.https.any.js",
];
const texts = [];
for (const path of scripts) texts.push(await (await fetch(path)).text());
(0, eval)(texts.join("\n"));
