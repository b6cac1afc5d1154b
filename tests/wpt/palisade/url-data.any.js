// Palisade's own driver over WPT's URL data files (urltestdata.json, setters_tests.json), which
// the `url` crate's package ships: every fresh clone that builds Palisade has them, so this file
// keeps part of the WPT measurement in CI without WPT's own test files. It checks what the
// data's documentation asks for, the same checks url-constructor, url-origin and url-setters make.

const PARTS = ["href", "protocol", "username", "password", "host", "hostname", "port", "pathname", "search", "hash"];

function parse(input, base) {
  return base === null || base === undefined ? new URL(input) : new URL(input, base);
}

promise_test(() => fetch("url/resources/urltestdata.json").then(res => res.json()).then(cases => {
  for (const c of cases) {
    if (typeof c === "string") continue;
    test(() => {
      if (c.failure) {
        assert_throws_js(TypeError, () => parse(c.input, c.base));
        return;
      }
      const url = parse(c.input, c.base);
      for (const part of PARTS) assert_equals(url[part], c[part], part);
      if ("searchParams" in c) assert_equals(url.searchParams.toString(), c.searchParams, "searchParams");
      if ("origin" in c) assert_equals(url.origin, c.origin, "origin");
    }, "parse <" + c.input + "> against <" + c.base + ">");
  }
}), "urltestdata.json");

promise_test(() => fetch("url/resources/setters_tests.json").then(res => res.json()).then(all => {
  for (const attribute of Object.keys(all)) {
    if (attribute === "comment") continue;
    for (const c of all[attribute]) {
      test(() => {
        const url = new URL(c.href);
        url[attribute] = c.new_value;
        for (const part of Object.keys(c.expected)) assert_equals(url[part], c.expected[part], part);
      }, "set <" + c.href + ">." + attribute + " = '" + c.new_value + "'" + ("comment" in c ? " " + c.comment : ""));
    }
  }
}), "setters_tests.json");
