// A classic script: its globals stay global.
var legacyReady = true;
function legacyHello() { return "hello from legacy"; }
