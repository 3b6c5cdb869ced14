package promcollector

// FiguresOf lets the tests build snapshots of a registry's adapters as ForRegistry does.
var FiguresOf = figures
