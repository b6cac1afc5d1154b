function main(input) {
  const rows = input.filter(r => r.price > 50).map(r => ({ id: r.id, total: r.price * 1.2 }));
  let sum = 0;
  for (const r of rows) sum += r.total;
  return { count: rows.length, sum: Math.round(sum * 100) / 100, first: rows[0], last: rows[rows.length - 1] };
}
