// Only what biome cannot check: the promise rules that need types. A store area turning asynchronous
// (D32) changes `if (store.accounts.isMember(…))` into a check that always passes, and only a linter
// that sees the types through `StoreArea<…>` notices. Style and everything else stay with biome.
import tseslint from "typescript-eslint";

export default tseslint.config(
  {
    ignores: [
      "gen/**",
      "clients/typescript/src/gen/**",
      "clients/typescript/dist/**",
      "node_modules/**",
      "scratch/**",
      ".tools/**",
      "dist/**",
      "**/*.js",
      "**/*.mjs",
      "**/*.cjs",
    ],
  },
  {
    files: ["**/*.ts", "**/*.tsx"],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { "@typescript-eslint": tseslint.plugin },
    linterOptions: { reportUnusedDisableDirectives: "error" },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      // Conditions and spreads only: a promise passed where a callback's result is ignored is how Node's
      // event and stream APIs are used here, each with its own error handling.
      "@typescript-eslint/no-misused-promises": [
        "error",
        { checksConditionals: true, checksSpreads: true, checksVoidReturn: false },
      ],
      "@typescript-eslint/await-thenable": "error",
      // A SQLite connection opens through src/store/sqlite-addon.ts, which loads the addon built for the
      // running Node (issue 50): one opened any other way works on Node 20 and fails only on Node 24.
      "@typescript-eslint/no-restricted-imports": [
        "error",
        {
          paths: [
            {
              name: "better-sqlite3",
              allowTypeImports: true,
              message: "open connections with openSqlite (src/store/sqlite-addon.ts); import types only.",
            },
          ],
        },
      ],
    },
  },
  {
    files: ["src/store/sqlite-addon.ts"],
    rules: { "@typescript-eslint/no-restricted-imports": "off" },
  },
);
