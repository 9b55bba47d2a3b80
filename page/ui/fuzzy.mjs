// Fuzzy matching of file paths for quick open and the tree filter (issue 33 item 1;
// docs/search.md). A tiny pure function over the file list the host already gave the page
// (file.walk): presentation only — which files exist, and which may be opened, is the host's.

const WORD_START = new Set(["/", "_", "-", ".", " "]);

/**
 * How well `query` matches `path` as a fuzzy subsequence (letter case ignored, spaces in the
 * query ignored), or null when it does not. Higher is better: characters of the file's own
 * name count more than its folders', a run of consecutive characters and the start of a word
 * count more, a name that starts with the query most.
 */
export function fuzzyScore(query, path) {
  const q = query.toLowerCase().replace(/\s+/g, "");
  if (!q) return 0;
  const p = path.toLowerCase();
  const base = p.lastIndexOf("/") + 1;
  // match from the end of the name backwards first, so the name's own characters are used
  const at = [];
  let i = p.length - 1;
  for (let k = q.length - 1; k >= 0; k -= 1) {
    while (i >= 0 && p[i] !== q[k]) i -= 1;
    if (i < 0) return null;
    at.unshift(i);
    i -= 1;
  }
  let score = 0;
  for (let k = 0; k < at.length; k += 1) {
    const j = at[k];
    score += j >= base ? 3 : 1;
    if (k > 0 && at[k - 1] === j - 1) score += 4;
    if (j === 0 || WORD_START.has(p[j - 1]) || (path[j] !== p[j] && path[j - 1] === p[j - 1]))
      score += 3;
  }
  const name = p.slice(base);
  if (name.startsWith(q)) score += 20;
  else if (name.includes(q)) score += 10;
  return score - Math.min(20, Math.floor(p.length / 16));
}

/** The `limit` best matches of `query` among `paths` (strings), best first; ties by length
 * then name. */
export function rankPaths(query, paths, limit = 50) {
  const scored = [];
  for (const path of paths) {
    const score = fuzzyScore(query, path);
    if (score !== null) scored.push([score, path]);
  }
  scored.sort(
    (a, b) => b[0] - a[0] || a[1].length - b[1].length || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0),
  );
  return scored.slice(0, limit).map(([, path]) => path);
}
