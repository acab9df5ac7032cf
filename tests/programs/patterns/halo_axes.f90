! A 2-D halo exchange one axis at a time, as CloverLeaf (UK-MAC/CloverLeaf_ref,
! clover.f90's clover_exchange) does it: the chunks of a px × py grid (MPI_DIMS_CREATE)
! post an MPI_IRECV and an MPI_ISEND to each neighbour left and right and wait for them
! all (MPI_WAITALL of as many requests as the chunk has neighbours on the axis: 2 at an
! end, 4 inside), then the same bottom and top, then an MPI_ALLREDUCE (the time step).
! A corner chunk waits for 2 and 2 requests, an edge chunk for 2 and 4, an inner one for
! 4 and 4.
!
!   halo_axes [STEPS]   (20 by default)
program halo_axes
  use mpi
  implicit none
  integer, parameter :: cells = 256
  integer :: ierr, rank, nranks, dims(2), x, y, step, steps, n, neighbour, axis, side
  integer :: requests(4)
  character(len=32) :: argument
  double precision :: sent(cells, 4), received(cells, 4), dt, smallest
  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nranks, ierr)
  steps = 20
  if (command_argument_count() >= 1) then
    call get_command_argument(1, argument)
    read (argument, *) steps
  end if
  dims = 0
  call MPI_DIMS_CREATE(nranks, 2, dims, ierr)
  x = mod(rank, dims(1))
  y = rank / dims(1)
  sent = rank
  do step = 1, steps
    do axis = 1, 2
      n = 0
      do side = 1, 2
        neighbour = -1
        if (axis == 1 .and. side == 1 .and. x > 0) neighbour = rank - 1
        if (axis == 1 .and. side == 2 .and. x < dims(1) - 1) neighbour = rank + 1
        if (axis == 2 .and. side == 1 .and. y > 0) neighbour = rank - dims(1)
        if (axis == 2 .and. side == 2 .and. y < dims(2) - 1) neighbour = rank + dims(1)
        if (neighbour >= 0) then
          ! Tag: the direction the message travels, as the receiver sees it.
          call MPI_IRECV(received(1, n / 2 + 1), cells, MPI_DOUBLE_PRECISION, neighbour, &
                         3 - side, MPI_COMM_WORLD, requests(n + 1), ierr)
          call MPI_ISEND(sent(1, n / 2 + 1), cells, MPI_DOUBLE_PRECISION, neighbour, &
                         side, MPI_COMM_WORLD, requests(n + 2), ierr)
          n = n + 2
        end if
      end do
      call MPI_WAITALL(n, requests, MPI_STATUSES_IGNORE, ierr)
    end do
    dt = 1.0d0 / (rank + step)
    call MPI_ALLREDUCE(dt, smallest, 1, MPI_DOUBLE_PRECISION, MPI_MIN, MPI_COMM_WORLD, ierr)
  end do
  call MPI_FINALIZE(ierr)
end program halo_axes
