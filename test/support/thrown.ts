/** What `f` throws, or the text "nothing was thrown": for synchronous functions a JavaScript caller may misuse. */
export const thrownBy = (f: () => unknown): unknown => {
  try {
    f()
  } catch (error) {
    return error
  }
  return "nothing was thrown"
}
