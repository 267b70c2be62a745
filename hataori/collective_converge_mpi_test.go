//go:build mpirt || mpicgo

package hataori

// converge is convergeCoded without a code, for the convergence tests
// (production code always sends a code, so it lives here).
func (k *collective) converge(key int64, msg string) (int64, string, error) {
	w, _, m, err := k.convergeCoded(key, 0, msg)
	return w, m, err
}
