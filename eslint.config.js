import js from '@eslint/js'
import tseslint from 'typescript-eslint'

export default tseslint.config(
  { ignores: ['**/dist/**', '**/dist.building-*/**', '**/node_modules/**', '**/coverage/**', '.ptc-bench/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-constant-condition': ['error', { checkLoops: false }],
    },
  },
  {
    files: ['**/*.test.ts', '**/*.test-d.ts', 'test/**', 'bench/**'],
    rules: { '@typescript-eslint/no-unused-expressions': 'off' },
  },
)
