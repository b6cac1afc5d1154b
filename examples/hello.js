// Palisade's hello world: the default export is called with the JSON input.
// Run it with: cargo run -- run examples/hello.js --input '{"name":"Ada"}'
export default async function greet(input) {
  const name = input?.name ?? "world";
  console.log(`greeting ${name}`);
  await null; // async functions and top-level await work; pending jobs are drained
  return { greeting: `Hello, ${name}!`, at: new Date().toISOString().slice(0, 4) >= "2024" };
}
