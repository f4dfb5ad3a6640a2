//go:build !race

package framesize

// Race: the executable is built with the race detector, whose
// instrumentation enlarges frames and doubles the runtime's stack guard;
// sizes and stack depths are not those of the product's build.
const Race = false
