// ESLint flat config (issue 35): every JavaScript file we write, by where it runs.
// Formatting is Prettier's (.prettierrc.json); ESLint checks correctness only.
import js from "@eslint/js";
import globals from "globals";

const browser = { ...globals.browser };
const worker = { ...globals.worker };
const node = { ...globals.node };

export default [
  { ignores: ["node_modules/**", "dist/**", "out/**", "wasm_tools/out/**", ".nox/**"] },
  js.configs.recommended,
  {
    languageOptions: { ecmaVersion: 2024, sourceType: "module" },
    linterOptions: { reportUnusedDisableDirectives: "error" },
    rules: {
      "no-unused-vars": [
        "error",
        { args: "after-used", argsIgnorePattern: "^_", caughtErrors: "none" },
      ],
      "no-var": "error",
      "prefer-const": "error",
      eqeqeq: ["error", "smart"],
      "no-implicit-globals": "error",
      "no-shadow-restricted-names": "error",
      "no-eval": "error",
      "no-implied-eval": "error",
      "no-new-func": "error",
      // window.name, status, event… are browser globals: an import forgotten for a helper of
      // the same name (tools.mjs used dom.mjs's name() unimported) must fail here, not at a click
      "no-restricted-globals": ["error", "name", "status", "event", "length", "close", "open"],
    },
  },
  { files: ["page/**/*.mjs", "page/**/*.js"], languageOptions: { globals: browser } },
  { files: ["page/sw.js"], languageOptions: { globals: { ...globals.serviceworker } } },
  { files: ["worker/*.mjs", "worker/*.js"], languageOptions: { globals: worker } },
  {
    files: ["worker/sitebuild/**", "e2e/**", "tests/**/*.mjs", "bench/*.mjs"],
    languageOptions: { globals: node },
  },
  { files: ["page/editor/contrast.mjs"], languageOptions: { globals: { ...browser, ...node } } },
  { files: ["e2e/liar_peer.mjs"], languageOptions: { globals: worker } },
  { files: ["bench/pages/**"], languageOptions: { globals: { ...browser, ...worker } } },
  {
    // classic scripts inlined into sandboxed documents (their CSP admits them by hash)
    files: ["wasm_tools/*.js", "runtime/*.js", "tests/tool/sandbox_harness/*.js"],
    languageOptions: { sourceType: "script", globals: { ...browser, ...worker } },
  },
];
