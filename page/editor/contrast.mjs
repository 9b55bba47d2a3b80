// `node page/editor/contrast.mjs`: checks the editor palettes (WCAG AA). Every token colour
// against every background it can sit on (plain, active line, each overlay over the active
// line) must reach 4.5:1, each gutter/panel pair too, and the focus ring 3:1 on the
// background. Prints what fails and exits 1, or exits 0. Run by tests/build/test_editor.py.
import { palettes } from "./palettes.mjs";

const hex = (h) => {
  let s = h.replace("#", "");
  if (s.length <= 4) s = [...s].map((c) => c + c).join("");
  const n = s.match(/../g).map((x) => parseInt(x, 16));
  return { r: n[0], g: n[1], b: n[2], a: n[3] === undefined ? 1 : n[3] / 255 };
};
const over = (top, under) => ({
  r: top.r * top.a + under.r * (1 - top.a),
  g: top.g * top.a + under.g * (1 - top.a),
  b: top.b * top.a + under.b * (1 - top.a),
  a: 1,
});
const lum = (c) => {
  const f = (v) => {
    const x = v / 255;
    return x <= 0.03928 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * f(c.r) + 0.7152 * f(c.g) + 0.0722 * f(c.b);
};
export const ratio = (fg, bg) => {
  const a = lum(fg);
  const b = lum(bg);
  return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
};

/** Every failing pair of palette `p`, as text (empty when all pass). */
export function check(p) {
  const base = hex(p.bg);
  const bad = [];
  const active = over(hex(p.activeLine), base);
  const bgs = Object.fromEntries(
    Object.entries(p.overlays).map(([k, v]) => [k, over(hex(v), active)]),
  );
  bgs.base = base;
  bgs.activeLine = active;
  for (const [name, fg] of Object.entries(p.tokens)) {
    for (const [bn, bg] of Object.entries(bgs)) {
      const r = ratio(hex(fg), bg);
      if (r < 4.5) bad.push(`${name} ${fg} on ${bn}: ${r.toFixed(2)}`);
    }
  }
  for (const [name, [fg, bg]] of Object.entries(p.pairs || {})) {
    const r = ratio(hex(fg), over(hex(bg), base));
    if (r < 4.5) bad.push(`${name}: ${r.toFixed(2)}`);
  }
  const ring = ratio(hex(p.focus), base);
  if (ring < 3) bad.push(`focus ${p.focus}: ${ring.toFixed(2)}`);
  return bad;
}

let failed = 0;
for (const [name, p] of Object.entries(palettes)) {
  const bad = check(p);
  failed += bad.length;
  console.log(name, bad.length ? bad.join("; ") : "all pass");
}
process.exitCode = failed ? 1 : 0;
