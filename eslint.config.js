import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** A folder whose files may not import what `regex` matches. */
function boundary(folder, regex, message) {
  return { files: [`${folder}/**`], rules: { 'no-restricted-imports': ['error', { patterns: [{ regex, message }] }] } };
}

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
  // The configuration is read by every command and by the benches, so it must not drag the
  // gateway in: what it needs from elsewhere lives in src/config or src/shared.
  boundary('src/config', '(^|/)gateway/', 'src/config must not import from src/gateway; move what it needs to src/config or src/shared.'),
  // The origin and the gateway are two servers: what both need (negotiation, the compression
  // rule, the codec) lives in src/shared, so neither drags the other in.
  boundary('src/origin', '(^|/)gateway/', 'src/origin must not import from src/gateway; move what both need to src/shared.'),
  boundary('src/gateway', '(^|/)origin/', 'src/gateway must not import from src/origin; move what both need to src/shared.'),
  boundary('src/shared', '(^|/)(gateway|origin)/', 'src/shared is what the servers share: it imports from neither.'),
  {
    files: ['**/*.js'],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    files: ['test/**', 'bench/**', 'src/cli/**', 'src/loadtest/**'],
    rules: { 'no-console': 'off' },
  },
);
