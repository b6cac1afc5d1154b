// META: title=WebCryptoAPI: generateKey() for Failures (ECDSA)
// META: script=/WebCryptoAPI/util/helpers.js
// META: script=/WebCryptoAPI/generateKey/algorithm_registry.js
// META: script=/WebCryptoAPI/generateKey/failures.js
// Palisade's driver: WPT's generateKey/failures_*.https.any.js files for ECDSA, as for the other
// algorithms, over the same vendored helpers (the ECDSA one stored with them predates
// algorithm_registry.js, which failures.js now needs).
run_test(["ECDSA"]);
