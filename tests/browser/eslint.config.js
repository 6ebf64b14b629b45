// ESLint for the report pages' own scripts (crates/cpuprof-report/assets/*.js) and the
// browser checks. Run from the repository root (tests/report.rs does):
//   node tests/browser/node_modules/eslint/bin/eslint.js -c tests/browser/eslint.config.js
"use strict";

const js = require("@eslint/js");

const common = {
  ...js.configs.recommended.rules,
  "no-var": "error",
  "prefer-const": "error",
  eqeqeq: "error",
  "no-implicit-globals": "error",
  // Names reach the page as text: no markup sinks.
  "no-restricted-properties": [
    "error",
    { property: "innerHTML", message: "set text with textContent" },
    { property: "outerHTML", message: "set text with textContent" },
    { property: "insertAdjacentHTML", message: "set text with textContent" },
  ],
  "no-eval": "error",
  "no-implied-eval": "error",
  "no-new-func": "error",
};

module.exports = [
  {
    files: ["crates/cpuprof-report/assets/*.js"],
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: "script",
      // page.js's helpers: the scripts are one inline script, page.js first.
      globals: {
        window: "readonly",
        document: "readonly",
        devicePixelRatio: "readonly",
        atob: "readonly",
        Blob: "readonly",
        DecompressionStream: "readonly",
        Response: "readonly",
        URL: "readonly",
        uPlot: "readonly",
        $: "readonly",
        make: "readonly",
        formatNs: "readonly",
        fact: "readonly",
        codePointOrder: "readonly",
        visible: "readonly",
        isolated: "readonly",
        named: "readonly",
      },
    },
    rules: common,
  },
  {
    files: ["crates/cpuprof-report/assets/page.js"],
    languageOptions: { globals: { $: "off", make: "off", formatNs: "off", fact: "off", codePointOrder: "off", visible: "off", isolated: "off", named: "off" } },
  },
  {
    files: ["tests/browser/*.js"],
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: "commonjs",
      globals: { require: "readonly", module: "writable", process: "readonly", console: "readonly", __dirname: "readonly", Buffer: "readonly", setTimeout: "readonly", clearTimeout: "readonly", document: "readonly", window: "readonly", NodeFilter: "readonly", requestAnimationFrame: "readonly" },
    },
    rules: common,
  },
];
