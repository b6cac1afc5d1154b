function helper0(a, b) {
  const x = a * 1 + b;
  if (x > 0) { return [x, a, b].map(v => v + 0).reduce((s, v) => s + v, 0); }
  return { k: 'h0', v: x, s: String(a) + '/' + String(b) };
}
function helper1(a, b) {
  const x = a * 2 + b;
  if (x > 10) { return [x, a, b].map(v => v + 1).reduce((s, v) => s + v, 0); }
  return { k: 'h1', v: x, s: String(a) + '/' + String(b) };
}
function helper2(a, b) {
  const x = a * 3 + b;
  if (x > 20) { return [x, a, b].map(v => v + 2).reduce((s, v) => s + v, 0); }
  return { k: 'h2', v: x, s: String(a) + '/' + String(b) };
}
function helper3(a, b) {
  const x = a * 4 + b;
  if (x > 30) { return [x, a, b].map(v => v + 3).reduce((s, v) => s + v, 0); }
  return { k: 'h3', v: x, s: String(a) + '/' + String(b) };
}
function helper4(a, b) {
  const x = a * 5 + b;
  if (x > 40) { return [x, a, b].map(v => v + 4).reduce((s, v) => s + v, 0); }
  return { k: 'h4', v: x, s: String(a) + '/' + String(b) };
}
function helper5(a, b) {
  const x = a * 6 + b;
  if (x > 50) { return [x, a, b].map(v => v + 5).reduce((s, v) => s + v, 0); }
  return { k: 'h5', v: x, s: String(a) + '/' + String(b) };
}
function helper6(a, b) {
  const x = a * 7 + b;
  if (x > 60) { return [x, a, b].map(v => v + 6).reduce((s, v) => s + v, 0); }
  return { k: 'h6', v: x, s: String(a) + '/' + String(b) };
}
function helper7(a, b) {
  const x = a * 8 + b;
  if (x > 70) { return [x, a, b].map(v => v + 7).reduce((s, v) => s + v, 0); }
  return { k: 'h7', v: x, s: String(a) + '/' + String(b) };
}
function helper8(a, b) {
  const x = a * 9 + b;
  if (x > 80) { return [x, a, b].map(v => v + 8).reduce((s, v) => s + v, 0); }
  return { k: 'h8', v: x, s: String(a) + '/' + String(b) };
}
function helper9(a, b) {
  const x = a * 10 + b;
  if (x > 90) { return [x, a, b].map(v => v + 9).reduce((s, v) => s + v, 0); }
  return { k: 'h9', v: x, s: String(a) + '/' + String(b) };
}
function helper10(a, b) {
  const x = a * 11 + b;
  if (x > 100) { return [x, a, b].map(v => v + 10).reduce((s, v) => s + v, 0); }
  return { k: 'h10', v: x, s: String(a) + '/' + String(b) };
}
function helper11(a, b) {
  const x = a * 12 + b;
  if (x > 110) { return [x, a, b].map(v => v + 11).reduce((s, v) => s + v, 0); }
  return { k: 'h11', v: x, s: String(a) + '/' + String(b) };
}
function helper12(a, b) {
  const x = a * 13 + b;
  if (x > 120) { return [x, a, b].map(v => v + 12).reduce((s, v) => s + v, 0); }
  return { k: 'h12', v: x, s: String(a) + '/' + String(b) };
}
function helper13(a, b) {
  const x = a * 14 + b;
  if (x > 130) { return [x, a, b].map(v => v + 13).reduce((s, v) => s + v, 0); }
  return { k: 'h13', v: x, s: String(a) + '/' + String(b) };
}
function helper14(a, b) {
  const x = a * 15 + b;
  if (x > 140) { return [x, a, b].map(v => v + 14).reduce((s, v) => s + v, 0); }
  return { k: 'h14', v: x, s: String(a) + '/' + String(b) };
}
function helper15(a, b) {
  const x = a * 16 + b;
  if (x > 150) { return [x, a, b].map(v => v + 15).reduce((s, v) => s + v, 0); }
  return { k: 'h15', v: x, s: String(a) + '/' + String(b) };
}
function helper16(a, b) {
  const x = a * 17 + b;
  if (x > 160) { return [x, a, b].map(v => v + 16).reduce((s, v) => s + v, 0); }
  return { k: 'h16', v: x, s: String(a) + '/' + String(b) };
}
function helper17(a, b) {
  const x = a * 18 + b;
  if (x > 170) { return [x, a, b].map(v => v + 17).reduce((s, v) => s + v, 0); }
  return { k: 'h17', v: x, s: String(a) + '/' + String(b) };
}
function helper18(a, b) {
  const x = a * 19 + b;
  if (x > 180) { return [x, a, b].map(v => v + 18).reduce((s, v) => s + v, 0); }
  return { k: 'h18', v: x, s: String(a) + '/' + String(b) };
}
function helper19(a, b) {
  const x = a * 20 + b;
  if (x > 190) { return [x, a, b].map(v => v + 19).reduce((s, v) => s + v, 0); }
  return { k: 'h19', v: x, s: String(a) + '/' + String(b) };
}
function helper20(a, b) {
  const x = a * 21 + b;
  if (x > 200) { return [x, a, b].map(v => v + 20).reduce((s, v) => s + v, 0); }
  return { k: 'h20', v: x, s: String(a) + '/' + String(b) };
}
function helper21(a, b) {
  const x = a * 22 + b;
  if (x > 210) { return [x, a, b].map(v => v + 21).reduce((s, v) => s + v, 0); }
  return { k: 'h21', v: x, s: String(a) + '/' + String(b) };
}
function helper22(a, b) {
  const x = a * 23 + b;
  if (x > 220) { return [x, a, b].map(v => v + 22).reduce((s, v) => s + v, 0); }
  return { k: 'h22', v: x, s: String(a) + '/' + String(b) };
}
function helper23(a, b) {
  const x = a * 24 + b;
  if (x > 230) { return [x, a, b].map(v => v + 23).reduce((s, v) => s + v, 0); }
  return { k: 'h23', v: x, s: String(a) + '/' + String(b) };
}
function helper24(a, b) {
  const x = a * 25 + b;
  if (x > 240) { return [x, a, b].map(v => v + 24).reduce((s, v) => s + v, 0); }
  return { k: 'h24', v: x, s: String(a) + '/' + String(b) };
}
class Model0 {
  constructor(id, name) { this.id = id; this.name = name || 'model0'; this.tags = []; }
  tag(t) { this.tags.push(String(t)); return this; }
  toJSON() { return { id: this.id, name: this.name, tags: this.tags.slice(), kind: 0 }; }
}
class Model1 {
  constructor(id, name) { this.id = id; this.name = name || 'model1'; this.tags = []; }
  tag(t) { this.tags.push(String(t)); return this; }
  toJSON() { return { id: this.id, name: this.name, tags: this.tags.slice(), kind: 1 }; }
}
class Model2 {
  constructor(id, name) { this.id = id; this.name = name || 'model2'; this.tags = []; }
  tag(t) { this.tags.push(String(t)); return this; }
  toJSON() { return { id: this.id, name: this.name, tags: this.tags.slice(), kind: 2 }; }
}
class Model3 {
  constructor(id, name) { this.id = id; this.name = name || 'model3'; this.tags = []; }
  tag(t) { this.tags.push(String(t)); return this; }
  toJSON() { return { id: this.id, name: this.name, tags: this.tags.slice(), kind: 3 }; }
}
class Model4 {
  constructor(id, name) { this.id = id; this.name = name || 'model4'; this.tags = []; }
  tag(t) { this.tags.push(String(t)); return this; }
  toJSON() { return { id: this.id, name: this.name, tags: this.tags.slice(), kind: 4 }; }
}
class Model5 {
  constructor(id, name) { this.id = id; this.name = name || 'model5'; this.tags = []; }
  tag(t) { this.tags.push(String(t)); return this; }
  toJSON() { return { id: this.id, name: this.name, tags: this.tags.slice(), kind: 5 }; }
}
class Model6 {
  constructor(id, name) { this.id = id; this.name = name || 'model6'; this.tags = []; }
  tag(t) { this.tags.push(String(t)); return this; }
  toJSON() { return { id: this.id, name: this.name, tags: this.tags.slice(), kind: 6 }; }
}
class Model7 {
  constructor(id, name) { this.id = id; this.name = name || 'model7'; this.tags = []; }
  tag(t) { this.tags.push(String(t)); return this; }
  toJSON() { return { id: this.id, name: this.name, tags: this.tags.slice(), kind: 7 }; }
}
class Model8 {
  constructor(id, name) { this.id = id; this.name = name || 'model8'; this.tags = []; }
  tag(t) { this.tags.push(String(t)); return this; }
  toJSON() { return { id: this.id, name: this.name, tags: this.tags.slice(), kind: 8 }; }
}
class Model9 {
  constructor(id, name) { this.id = id; this.name = name || 'model9'; this.tags = []; }
  tag(t) { this.tags.push(String(t)); return this; }
  toJSON() { return { id: this.id, name: this.name, tags: this.tags.slice(), kind: 9 }; }
}
class Model10 {
  constructor(id, name) { this.id = id; this.name = name || 'model10'; this.tags = []; }
  tag(t) { this.tags.push(String(t)); return this; }
  toJSON() { return { id: this.id, name: this.name, tags: this.tags.slice(), kind: 10 }; }
}
class Model11 {
  constructor(id, name) { this.id = id; this.name = name || 'model11'; this.tags = []; }
  tag(t) { this.tags.push(String(t)); return this; }
  toJSON() { return { id: this.id, name: this.name, tags: this.tags.slice(), kind: 11 }; }
}
class Model12 {
  constructor(id, name) { this.id = id; this.name = name || 'model12'; this.tags = []; }
  tag(t) { this.tags.push(String(t)); return this; }
  toJSON() { return { id: this.id, name: this.name, tags: this.tags.slice(), kind: 12 }; }
}
class Model13 {
  constructor(id, name) { this.id = id; this.name = name || 'model13'; this.tags = []; }
  tag(t) { this.tags.push(String(t)); return this; }
  toJSON() { return { id: this.id, name: this.name, tags: this.tags.slice(), kind: 13 }; }
}
class Model14 {
  constructor(id, name) { this.id = id; this.name = name || 'model14'; this.tags = []; }
  tag(t) { this.tags.push(String(t)); return this; }
  toJSON() { return { id: this.id, name: this.name, tags: this.tags.slice(), kind: 14 }; }
}
class Model15 {
  constructor(id, name) { this.id = id; this.name = name || 'model15'; this.tags = []; }
  tag(t) { this.tags.push(String(t)); return this; }
  toJSON() { return { id: this.id, name: this.name, tags: this.tags.slice(), kind: 15 }; }
}
class Model16 {
  constructor(id, name) { this.id = id; this.name = name || 'model16'; this.tags = []; }
  tag(t) { this.tags.push(String(t)); return this; }
  toJSON() { return { id: this.id, name: this.name, tags: this.tags.slice(), kind: 16 }; }
}
class Model17 {
  constructor(id, name) { this.id = id; this.name = name || 'model17'; this.tags = []; }
  tag(t) { this.tags.push(String(t)); return this; }
  toJSON() { return { id: this.id, name: this.name, tags: this.tags.slice(), kind: 17 }; }
}
class Model18 {
  constructor(id, name) { this.id = id; this.name = name || 'model18'; this.tags = []; }
  tag(t) { this.tags.push(String(t)); return this; }
  toJSON() { return { id: this.id, name: this.name, tags: this.tags.slice(), kind: 18 }; }
}
class Model19 {
  constructor(id, name) { this.id = id; this.name = name || 'model19'; this.tags = []; }
  tag(t) { this.tags.push(String(t)); return this; }
  toJSON() { return { id: this.id, name: this.name, tags: this.tags.slice(), kind: 19 }; }
}
class Model20 {
  constructor(id, name) { this.id = id; this.name = name || 'model20'; this.tags = []; }
  tag(t) { this.tags.push(String(t)); return this; }
  toJSON() { return { id: this.id, name: this.name, tags: this.tags.slice(), kind: 20 }; }
}
class Model21 {
  constructor(id, name) { this.id = id; this.name = name || 'model21'; this.tags = []; }
  tag(t) { this.tags.push(String(t)); return this; }
  toJSON() { return { id: this.id, name: this.name, tags: this.tags.slice(), kind: 21 }; }
}
class Model22 {
  constructor(id, name) { this.id = id; this.name = name || 'model22'; this.tags = []; }
  tag(t) { this.tags.push(String(t)); return this; }
  toJSON() { return { id: this.id, name: this.name, tags: this.tags.slice(), kind: 22 }; }
}
class Model23 {
  constructor(id, name) { this.id = id; this.name = name || 'model23'; this.tags = []; }
  tag(t) { this.tags.push(String(t)); return this; }
  toJSON() { return { id: this.id, name: this.name, tags: this.tags.slice(), kind: 23 }; }
}
class Model24 {
  constructor(id, name) { this.id = id; this.name = name || 'model24'; this.tags = []; }
  tag(t) { this.tags.push(String(t)); return this; }
  toJSON() { return { id: this.id, name: this.name, tags: this.tags.slice(), kind: 24 }; }
}
function main(input) { return 1; }
