// META: title=WebCryptoAPI: importKey() for OKP keys
// META: timeout=long
// META: script=../util/helpers.js
// META: script=../util/okp_key_fixtures.js
// META: script=okp_importKey_fixtures.js
// META: script=okp_importKey.js


// Test importKey and exportKey for OKP algorithms.
runTests("Ed25519");
