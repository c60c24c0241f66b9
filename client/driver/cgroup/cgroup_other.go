//go:build !linux

package cgroup

import "errors"

// Manager creates task cgroups; cgroups exist on Linux only.
type Manager struct{}

var errNotLinux = errors.New("cgroups are only available on Linux")

// Detect always fails off Linux.
func Detect(parent string) (*Manager, error) { return nil, errNotLinux }

// Parent is empty off Linux.
func (m *Manager) Parent() string { return "" }

// Create always fails off Linux.
func (m *Manager) Create(name string, lim Limits) (string, error) { return "", errNotLinux }

// OOMKilled is always false off Linux.
func OOMKilled(dir string) bool { return false }

// Kill does nothing off Linux.
func Kill(dir string) error { return nil }

// Remove does nothing off Linux.
func Remove(dir string) error { return nil }
