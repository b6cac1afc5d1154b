// META: title=WebCryptoAPI: encrypt() Using AES-CBC
// Palisade's driver for WPT's encrypt_decrypt/aes_cbc.https.any.js: it runs aes.js over the
// AES-CBC vectors and the scripts they need (util/helpers.js for copyBuffer and equalBuffers;
// Node's copy of aes_cbc.https.any.js predates the helpers its vectors now use), as one classic
// script (an indirect eval), unchanged, as a worker would, then calls run_test().
const scripts = [
  "WebCryptoAPI/util/helpers.js",
  "WebCryptoAPI/encrypt_decrypt/aes_common_fixtures.js",
  "WebCryptoAPI/encrypt_decrypt/aes_cbc_vectors.js",
  "WebCryptoAPI/encrypt_decrypt/aes.js",
];
const texts = [];
for (const path of scripts) texts.push(await (await fetch(path)).text());
(0, eval)(texts.join("\n") + "\nrun_test();\n");
