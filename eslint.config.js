// ESLint: typescript-eslint's recommended rules, and @stylistic as the formatting check, set to the style the
// code is written in (2 spaces, single quotes, semicolons, trailing commas on multi-line lists, 1tbs braces,
// lines up to 200 characters of code). `npm run lint` checks; `npx eslint --fix .` is the formatter.
// Rules the code does not follow (one statement per line, a line break per chained call or object property,
// parentheses only where needed, ...) are off rather than imposed by a mass reformat. README: Lint.
import js from '@eslint/js';
import stylistic from '@stylistic/eslint-plugin';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'admin/dist/**', 'data/**', 'bench-results/**', 'test-artifacts/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  // CommonJS configuration files of tools (dependency-cruiser's).
  { files: ['**/*.cjs'], languageOptions: { sourceType: 'commonjs', globals: { module: 'writable', require: 'readonly', __dirname: 'readonly' } } },
  {
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // `any` stays allowed for now: 212 uses (half of them in tests); typing them is a change of its own.
      '@typescript-eslint/no-explicit-any': 'off',
      // A leading underscore marks a value left out on purpose (`{ id: _id, ...rest }`, `(_req, res) =>`).
      '@typescript-eslint/no-unused-vars': ['error', {
        argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', ignoreRestSiblings: true,
      }],
    },
  },
  {
    plugins: { '@stylistic': stylistic },
    rules: {
      ...stylistic.configs.all.rules,
      '@stylistic/indent': ['error', 2],
      '@stylistic/quotes': ['error', 'single', { avoidEscape: true, allowTemplateLiterals: 'always' }],
      '@stylistic/quote-props': ['error', 'as-needed'],
      '@stylistic/padded-blocks': ['error', 'never'],
      '@stylistic/space-before-function-paren': ['error', { anonymous: 'always', named: 'never', asyncArrow: 'always' }],
      '@stylistic/comma-dangle': ['error', 'always-multiline'],
      '@stylistic/brace-style': ['error', '1tbs', { allowSingleLine: true }],
      '@stylistic/operator-linebreak': ['error', 'before', { overrides: { '=': 'after' } }],
      '@stylistic/generator-star-spacing': ['error', { before: false, after: true }],
      '@stylistic/wrap-iife': ['error', 'inside'],
      '@stylistic/lines-between-class-members': ['error', 'always', { exceptAfterSingleLine: true }],
      // Strings, template literals and URLs may run long (SQL, messages, fixtures); code and comments may not.
      '@stylistic/max-len': ['error', {
        code: 200, comments: 180, ignoreStrings: true, ignoreTemplateLiterals: true, ignoreUrls: true, ignoreRegExpLiterals: true,
      }],
      '@stylistic/no-tabs': 'error',
      '@stylistic/jsx-quotes': ['error', 'prefer-double'],
      '@stylistic/jsx-equals-spacing': ['error', 'never'],
      '@stylistic/jsx-curly-spacing': ['error', 'never'],
      '@stylistic/jsx-tag-spacing': ['error', { beforeSelfClosing: 'always' }],
      '@stylistic/jsx-self-closing-comp': 'error',
      '@stylistic/jsx-indent-props': ['error', 2],
      '@stylistic/jsx-curly-brace-presence': 'error',
      '@stylistic/jsx-wrap-multilines': 'error',
      // Not the code's style (each would reformat hundreds of lines).
      '@stylistic/list-style': 'off',
      '@stylistic/max-statements-per-line': 'off',
      '@stylistic/multiline-ternary': 'off',
      '@stylistic/newline-per-chained-call': 'off',
      '@stylistic/no-extra-parens': 'off',
      '@stylistic/lines-around-comment': 'off',
      '@stylistic/multiline-comment-style': 'off',
      '@stylistic/implicit-arrow-linebreak': 'off',
      '@stylistic/wrap-regex': 'off',
    },
  },
);
