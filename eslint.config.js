import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'data/', 'bench/results/', 'bench-results/', 'loadtest-results/'] },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowBoolean: true }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      'no-console': 'error',
      // node:test's test()/describe() return promises the runner itself awaits.
      '@typescript-eslint/no-floating-promises': [
        'error',
        { allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: ['test', 'describe', 'it', 'suite'] }] },
      ],
    },
  },
  {
    // The configuration is read by every command and by the benches, so it must not drag the
    // gateway in: what it needs from elsewhere lives in src/config or src/shared.
    files: ['src/config/**'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ regex: '(^|/)gateway/', message: 'src/config must not import from src/gateway; move what it needs to src/config or src/shared.' }] }],
    },
  },
  {
    files: ['**/*.js'],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    files: ['test/**', 'bench/**', 'src/cli/**', 'src/loadtest/**'],
    rules: { 'no-console': 'off' },
  },
);
