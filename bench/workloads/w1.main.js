function main(input) { return input; }
