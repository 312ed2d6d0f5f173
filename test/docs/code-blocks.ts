/** A fenced code block of a Markdown page. */
export interface CodeBlock {
  lang: string;
  code: string;
  /** Why it is not run, from a `<!-- not run: ... -->` line just above it. */
  notRun?: string;
}

/** The page's fenced blocks, in order, each with the `not run` reason written above it, if any. */
export function codeBlocksOf(markdown: string): CodeBlock[] {
  const blocks: CodeBlock[] = [];
  for (const match of markdown.matchAll(/(?:<!-- not run: ([^>]*) -->\n\n?)?```(\w*)\n([\s\S]*?)```/g)) {
    blocks.push({ notRun: match[1], lang: match[2], code: match[3] });
  }
  return blocks;
}
