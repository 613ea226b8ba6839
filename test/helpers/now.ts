// The instant every test board is generated at and every test clock starts from.
export const NOW = Date.parse('2026-11-21T12:00:00Z');
