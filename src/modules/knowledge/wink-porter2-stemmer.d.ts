declare module 'wink-porter2-stemmer' {
  /** Porter2 (Snowball English): the stem of one lower-case English word. */
  const stem: (word: string) => string;
  export default stem;
}
