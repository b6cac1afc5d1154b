// META: title=WebCryptoAPI: generateKey() for Failures
// META: timeout=long
// META: script=../util/helpers.js
// META: script=algorithm_registry.js
// META: script=failures.js
run_test(["RSA-PSS"]);
