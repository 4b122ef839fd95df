/**
 * One shell word for a POSIX shell: as it is when it holds only characters
 * no shell treats specially, else single-quoted
 * (POSIX shell, 2.2 Quoting: https://pubs.opengroup.org/onlinepubs/9799919799/utilities/V3_chap02.html).
 * Plain words stay readable in settings files and rewritten commands. `=`
 * is quoted, so a first word never reads as an assignment; an empty word
 * becomes `''`.
 */
export function shellQuote(word: string): string {
  if (/^[A-Za-z0-9_@%+:,./-]+$/.test(word)) return word;
  return `'${word.replaceAll("'", `'\\''`)}'`;
}
