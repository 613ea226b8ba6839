// The part of marked 4's API the documentation tests use (marked 4 ships no types of its
// own; it is installed for redoc and pinned as a devDependency at that major).
declare module 'marked' {
  export namespace marked {
    interface Token {
      type: string;
      raw: string;
      text: string;
      href: string;
      lang?: string;
      codeBlockStyle?: 'indented';
      depth?: number;
      [key: string]: unknown;
    }
    type TokensList = Token[] & { links: Record<string, unknown> };
    function lexer(source: string, options?: { gfm?: boolean }): TokensList;
    function walkTokens(tokens: Token[], callback: (token: Token) => void): void;
  }
}
