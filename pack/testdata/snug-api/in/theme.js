export const mode = () => (snug.theme === "dark" ? "dark" : "light");
