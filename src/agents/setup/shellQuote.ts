/**
 * Quotes a word for sh only when it needs it, so common paths stay readable
 * in settings files. `=` is quoted so a first word never reads as an assignment.
 */
export function shellQuote(word: string): string {
  if (word !== '' && /^[A-Za-z0-9_@%+:,./-]+$/.test(word)) return word;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}
