// META: title=WebCryptoAPI: deriveBits() Using ECDH
// Palisade's driver for WPT's derive_bits_keys/ecdh_bits.js (the version stored here defines
// define_tests(), which imports its keys and then adds the tests, rather than run_test()): it
// runs the file as a classic script (an indirect eval), unchanged, and waits for define_tests()
// before the harness finishes.
setup({ explicit_done: true });
const text = await (await fetch("WebCryptoAPI/derive_bits_keys/ecdh_bits.js")).text();
(0, eval)(text);
define_tests().then(() => done(), () => done());
