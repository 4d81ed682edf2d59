package persist

// ExecDescriptor is execDescriptor, for the attack tests' helper process.
func ExecDescriptor(c *candidate, args []string) error {
	fd, err := c.descriptor()
	if err != nil {
		return err
	}
	return execDescriptor(c, fd, args)
}
