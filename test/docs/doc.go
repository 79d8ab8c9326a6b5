// Package docs holds the tests of the project's written documentation:
// README.md is a front door (short, the quick start on its first screen, no
// paragraph over 80 words), every relative link in README.md and docs/*.md
// leads to a file, and a heading, that exists, and every exported name in
// the Go sources has a doc comment (make lint runs that test beside
// staticcheck's checks of the comments' form) (issue 46).
package docs
