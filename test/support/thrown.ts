/** What `f` throws; fails the test when it returns. */
export function thrownBy(f: () => unknown): unknown {
  try {
    f()
  } catch (error) {
    return error
  }
  throw new Error('did not throw')
}
