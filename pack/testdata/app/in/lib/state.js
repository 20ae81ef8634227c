export const state = { count: 0 };
