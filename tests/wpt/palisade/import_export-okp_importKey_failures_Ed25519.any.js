// META: title=WebCryptoAPI: importKey() failures for OKP keys (Ed25519)
// Palisade's driver for WPT's import_export/importKey_failures.js over its OKP fixtures, for
// Ed25519. The two are classic scripts that declare functions util/helpers.js declares too, so,
// as the other import_export drivers do, it runs the helpers, the fixtures and the test
// functions as one classic script (an indirect eval), unchanged, then `run_test(["Ed25519"])`.
const scripts = [
  "WebCryptoAPI/util/helpers.js",
  "WebCryptoAPI/import_export/okp_importKey_failures_fixtures.js",
  "WebCryptoAPI/import_export/importKey_failures.js",
];
const texts = [];
for (const path of scripts) texts.push(await (await fetch(path)).text());
(0, eval)(texts.join("\n") + '\nrun_test(["Ed25519"]);');
