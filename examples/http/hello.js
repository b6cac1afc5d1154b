// An HTTP handler: `palisade build --http examples/http/hello.js -o hello.wasm`, then
// `wasmtime serve -S cli -S http -S keyvalue -S config hello.wasm` (the exact flags are printed
// by the build) and `curl 'http://127.0.0.1:8080/?name=Ada'`.
export default {
  async fetch(request) {
    const url = new URL(request.url);
    const name = url.searchParams.get("name") ?? "world";
    const body = request.method === "POST" ? await request.text() : "";
    return new Response(JSON.stringify({ greeting: `Hello, ${name}!`, method: request.method, body }), {
      status: 200,
      headers: { "content-type": "application/json", "x-palisade": "standalone" },
    });
  },
};
